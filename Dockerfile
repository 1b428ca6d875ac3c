# Images of oplab's programs, built without a registry: the binaries are
# built on the host first (statically linked) and copied in, so no
# stage starts FROM an image that would have to be pulled. `make images`
# does both steps (hack/kind/build-operator-image.sh):
#
#   go build -ldflags "-linkmode external -extldflags -static" -o <ctx>/ ./cmd/...
#   docker build -f Dockerfile --target pg-operator -t oplab.dev/pg-operator:0.1.0 <ctx>
#   docker build -f Dockerfile --target oplab -t oplab.dev/oplab:0.1.0 <ctx>
#
# Both run as an unprivileged user (65532) on an empty base.

FROM scratch AS base
COPY passwd /etc/passwd
COPY group /etc/group
# Go's own DNS resolver: the static binaries carry no working glibc one.
ENV GODEBUG=netdns=go
USER 65532:65532

# The reference PostgreSQL operator, as the chart's Deployment runs it.
FROM base AS pg-operator
COPY pg-operator /usr/local/bin/pg-operator
ENTRYPOINT ["/usr/local/bin/pg-operator"]

# The lab server with the embedded control plane's binaries beside it. The
# pods provider runs learners' control planes from it too (cellpod).
FROM base AS oplab
COPY oplab hostpod pg-operator cellpod /usr/local/bin/
COPY controlplane/ /usr/local/bin/
# The C library of the host that built the control plane (empty when the
# control plane is linked statically).
COPY sysroot/ /
ENV OPLAB_BIN=/usr/local/bin OPLAB_DATA=/tmp/oplab HOME=/tmp
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/oplab"]
CMD ["serve", "--addr", "0.0.0.0:8080"]
