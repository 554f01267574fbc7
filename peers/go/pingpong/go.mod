module fibra-peers/pingpong

go 1.21
