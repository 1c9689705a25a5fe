module github.com/jobkit/jobkit

go 1.25.0

require (
	github.com/puzpuzpuz/xsync/v4 v4.5.0
	github.com/robfig/cron/v3 v3.0.1
	github.com/shirou/gopsutil/v4 v4.26.8
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.22.0
	golang.org/x/time v0.15.0
	pgregory.net/rapid v1.3.0
)

require (
	github.com/ebitengine/purego v0.10.2 // indirect
	github.com/go-ole/go-ole v1.2.6 // indirect
	github.com/lufia/plan9stats v0.0.0-20211012122336-39d0f177ccd0 // indirect
	github.com/power-devops/perfstat v0.0.0-20240221224432-82ca36839d55 // indirect
	github.com/tklauser/go-sysconf v0.3.16 // indirect
	github.com/tklauser/numcpus v0.11.0 // indirect
	github.com/yusufpapurcu/wmi v1.2.4 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
