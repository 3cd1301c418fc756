module github.com/filtervm/filtervm/bindings/go

go 1.19
