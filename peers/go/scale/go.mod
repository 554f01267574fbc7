module fibra-peers/scale

go 1.21
