package cron_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// An engine makes up the runs a job missed while the process was down,
// given the last run that the previous process recorded: with RunEach(2)
// the two latest missed runs start at once, oldest first, one after the
// other; then the job waits for its next time.
func ExampleEngine() {
	ctx := context.Background()
	e, err := cron.New(cron.Config{})
	if err != nil {
		panic(err)
	}
	if err := e.Start(ctx); err != nil {
		panic(err)
	}
	defer e.Stop(ctx)

	// Hourly from the last run, three and a half hours ago: the runs at
	// +1h, +2h and +3h were missed.
	last := time.Now().Add(-3*time.Hour - 30*time.Minute)
	hourly, err := cron.Every(time.Hour, last)
	if err != nil {
		panic(err)
	}
	policy, err := cron.RunEach(2)
	if err != nil {
		panic(err)
	}
	done := make(chan struct{})
	runs := 0
	err = e.Register(ctx, "report", hourly, func(ctx context.Context, scheduled time.Time) error {
		fmt.Println("run for last +", scheduled.Sub(last))
		if runs++; runs == 2 {
			close(done)
		}
		return nil
	}, cron.WithMissed(policy), cron.WithLastRun(last))
	if err != nil {
		panic(err)
	}
	<-done
	info, _ := e.Job("report")
	fmt.Println("next at last +", info.Next.Sub(last))
	// Output:
	// run for last + 2h0m0s
	// run for last + 3h0m0s
	// next at last + 4h0m0s
}

// Bad input gives errors, never a panic.
func ExampleEngine_RegisterSpec() {
	ctx := context.Background()
	e, err := cron.New(cron.Config{})
	if err != nil {
		panic(err)
	}
	defer e.Stop(ctx)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	backup := func(ctx context.Context, scheduled time.Time) error { return nil }

	// 02:30 Berlin time, every day: once on the spring-forward day (at
	// 03:00), once on the fall-back day (the first 02:30).
	err = e.RegisterSpec(ctx, "backup", "30 2 * * *", backup, cron.WithLocation(berlin), cron.WithMissed(cron.RunOnce))
	fmt.Println(err)
	err = e.RegisterSpec(ctx, "backup", "@hourly", backup)
	fmt.Println(errors.Is(err, cron.ErrDuplicateJob), err)
	err = e.RegisterSpec(ctx, "fast", "@every 100ms", backup)
	fmt.Println(errors.Is(err, cron.ErrInvalidSpec), err)
	err = e.RegisterSpec(ctx, "tz", "TZ=UTC", backup)
	fmt.Println(errors.Is(err, cron.ErrInvalidSpec), err)
	err = e.Register(ctx, "nil", nil, backup)
	fmt.Println(errors.Is(err, cron.ErrInvalidJob), err)
	// Output:
	// <nil>
	// true cron: duplicate job name: "backup"
	// true cron: invalid spec "@every 100ms": invalid interval: 100ms is below one second
	// true cron: invalid spec "TZ=UTC": no schedule after the zone prefix
	// true cron: invalid job: job "nil": nil schedule
}
