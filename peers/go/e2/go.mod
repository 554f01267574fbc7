module fibra-peers/e2

go 1.21
