module fibra-peers/http

go 1.21
