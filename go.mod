module github.com/jobkit/jobkit

go 1.25.0

require (
	github.com/shirou/gopsutil/v4 v4.26.8 // indirect
	go.uber.org/goleak v1.3.0 // indirect
)
