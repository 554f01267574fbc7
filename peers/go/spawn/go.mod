module fibra-peers/spawn

go 1.21
