# cirulla-server in a slim, non-root image (deploy/k8s/ runs it).
#
#   docker build -t cirulla-server:0.1.0 .
#   docker run --rm -p 50051:50051 cirulla-server:0.1.0
#
# The build stage runs the README's install command (`pip install .`, here into
# a virtualenv and not editable): it generates the protobuf code and compiles
# the Cython core. The run stage gets the virtualenv and nothing else.

FROM python:3.11-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md LICENSE ./
COPY proto/ proto/
COPY solver/ solver/
COPY server/ server/
COPY cli/ cli/
RUN python -m venv /opt/cirulla && /opt/cirulla/bin/pip install --no-cache-dir .

FROM python:3.11-slim
COPY --from=build /opt/cirulla /opt/cirulla
RUN useradd --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin cirulla
USER 10001
ENV PATH=/opt/cirulla/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
EXPOSE 50051 9090
# the same check as the Kubernetes probes: grpc.health.v1 answers SERVING
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
    CMD ["python", "-m", "cirulla.server.probe", "127.0.0.1:50051"]
ENTRYPOINT ["cirulla-server", "--listen", "0.0.0.0:50051"]
