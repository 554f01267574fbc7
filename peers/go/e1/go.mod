module fibra-peers/e1

go 1.21
