module fibra-peers/fanin

go 1.21
