module example.invalid/combsiv/bindings/go

go 1.24
