# The worker image of a headroom fleet on Kubernetes (docs/distributed.md): the headroom
# binary on Debian slim, run as an unprivileged user. Java and Cassandra are not in it: a
# worker only sends load to a cluster it reaches over the network.
#
# Build: docker build -t REGISTRY/headroom:TAG .
# Without Docker, `headroom kube image --out FILE` writes an image of the same worker from the
# binary at hand (decision 0013). Either image's pods run `headroom kube worker -- ...`, which
# needs no shell; Debian's userland is here only to debug in.
# The build fetches crates from crates.io only (Cargo.lock, --locked); the C parts (aws-lc,
# mimalloc) build with the compiler the Rust image already has.

FROM rust:1.95-bookworm AS build
WORKDIR /src
# The manifest and the lock alone first, with stand-in sources (cargo reads the targets the
# manifest names), so the crates are downloaded in a layer that later changes of src/ leave
# cached. Only downloaded: compiling against stand-ins would leave artefacts newer than the
# real sources, which cargo would then take as up to date.
COPY Cargo.toml Cargo.lock ./
RUN mkdir -p src tests examples/floor benches \
    && echo 'fn main() {}' > src/main.rs \
    && touch src/lib.rs tests/tests.rs \
    && cargo fetch --locked
COPY . .
RUN cargo build --release --locked --bin headroom \
    && cp target/release/headroom /usr/local/bin/headroom

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin headroom \
    && mkdir -p /results && chown headroom:headroom /results
COPY --from=build /usr/local/bin/headroom /usr/local/bin/headroom
USER 10001
WORKDIR /results
ENTRYPOINT ["headroom"]
CMD ["--help"]
