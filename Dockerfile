# syntax=docker/dockerfile:1
# Gatehouse in a container: a static binary (pure Go, CGO off: SQLite is
# modernc's) on an empty image with CA roots and one unprivileged user; no
# shell, no package manager. Build: docker build -t gatehouse .
# (podman build works the same). Run it with PostgreSQL: compose.yaml.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/gatehouse ./cmd/gatehouse
# The user and group the image runs as, a data directory it owns, and a
# /tmp (SQLite's temporary files), for the empty final image. COPY of a
# directory copies what is in it, not the directory's owner and mode: so
# data and tmp are copied as entries of /out/owned (modes kept) with
# --chown.
RUN mkdir -p /out/etc /out/owned/data /out/owned/tmp \
 && echo 'gatehouse:x:65532:65532:gatehouse:/data:/sbin/nologin' > /out/etc/passwd \
 && echo 'gatehouse:x:65532:' > /out/etc/group \
 && chmod 0700 /out/owned/data && chmod 1777 /out/owned/tmp

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/etc/passwd /out/etc/group /etc/
COPY --from=build --chown=65532:65532 /out/owned/ /
COPY --from=build /out/gatehouse /gatehouse
USER 65532:65532
WORKDIR /data
# Listen on every interface of the container; SQLite in the volume unless
# GATEHOUSE_DATABASE_URL (or GATEHOUSE_DATABASE_URL_FILE) names PostgreSQL.
ENV GATEHOUSE_ADDR=0.0.0.0:8080 \
    GATEHOUSE_DATABASE_URL=sqlite:/data/gatehouse.db \
    GATEHOUSE_LOG_FORMAT=json
EXPOSE 8080
VOLUME ["/data"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s CMD ["/gatehouse", "health"]
ENTRYPOINT ["/gatehouse"]
CMD ["serve"]
