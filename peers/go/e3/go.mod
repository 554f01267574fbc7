module fibra-peers/e3

go 1.21
