module gofirst

go 1.19
