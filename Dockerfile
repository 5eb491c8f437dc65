# The cqlpg gateway. Build: docker build -t cqlpg .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/cqlpg ./cmd/cqlpg

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/cqlpg /usr/local/bin/cqlpg
EXPOSE 9042 9180
ENTRYPOINT ["/usr/local/bin/cqlpg", "serve"]
