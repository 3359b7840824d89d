"""What every part of passk shares: settings, the database and its models, states, flags, errors, and the
facts the client speaks too (k values, sample metadata, estimates as shown). The server owns settings,
database, models and migrations; the client never imports them."""
