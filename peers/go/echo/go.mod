module fibra-peers/echo

go 1.21
