module github.com/deponent-dev/deponent-action

go 1.26.8

require (
	github.com/sethvargo/go-githubactions v1.1.0
	github.com/stretchr/testify v1.12.1
	mvdan.cc/sh/v3 v3.14.1
)

require (
	github.com/sethvargo/go-envconfig v0.8.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
