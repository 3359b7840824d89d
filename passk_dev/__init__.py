"""Development harnesses (not shipped with the service): a whole passk on one machine for tests and benches."""
