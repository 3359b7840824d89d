# The passk service image (API, worker and CLI). BASE_IMAGE is an official
# Python image where a registry is reachable; on a machine without one, build
# from the local Debian base: --build-arg BASE_IMAGE=passk-base:bookworm
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE}

# The Debian base has python3 but not venv/pip.
RUN if ! python3 -c "import ensurepip, venv" 2>/dev/null; then \
      apt-get update && apt-get install -y --no-install-recommends python3-venv python3-pip \
      && rm -rf /var/lib/apt/lists/*; \
    fi \
 && (getent passwd 10002 || useradd --uid 10002 --user-group --no-create-home --shell /usr/sbin/nologin passk)

WORKDIR /app
COPY pyproject.toml README.md alembic.ini mkdocs.yml ./
COPY docs ./docs
COPY service ./service
COPY sandbox ./sandbox
COPY migrations ./migrations
# Builds with no package index: put wheels in a wheelhouse/ folder of the context
# (pip wheel -w wheelhouse '.[humaneval,docs]' setuptools wheel) and build with
# --build-arg PIP_INSTALL_ARGS="--no-index --find-links /wheelhouse".
# (README.md is there only because COPY needs one source that always exists.)
COPY README.md wheelhous[e] /wheelhouse/
ARG PIP_INSTALL_ARGS=""
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir $PIP_INSTALL_ARGS -e '/app[humaneval,docs]' \
 && rm -rf /wheelhouse
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PASSK_GUIDE_DIR=/opt/passk-guide
# The documentation site the API serves at /guide/, built offline and --strict.
RUN passk docs build --output /opt/passk-guide

# The API runs unprivileged; the worker service overrides the user because it
# talks to the Docker engine (compose mounts the socket into the worker only).
USER 10002:10002
EXPOSE 8000
CMD ["passk", "serve", "--host", "0.0.0.0", "--port", "8000"]
