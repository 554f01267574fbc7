module fibra-peers/park

go 1.21
