// Package prometheus exports the metrics of jobkit's scheduler (package
// sched) and reaper (package recovery) to Prometheus.
//
// New registers the metric vectors once, with a Registerer, and returns a
// Provider to set as both sched.Config.Metrics and recovery.Config.Metrics.
// Every series has a queue label, the queue's name. With the default
// namespace the series are:
//
//	jobkit_sched_depth                              gauge: entries ready to run
//	jobkit_sched_adds_total                         counter: entries added
//	jobkit_sched_queue_duration_seconds             histogram: wait from add to run
//	jobkit_sched_work_duration_seconds              histogram: run durations
//	jobkit_sched_unfinished_work_seconds            gauge: seconds of the runs in progress, summed
//	jobkit_sched_longest_running_processor_seconds  gauge: seconds of the longest run in progress
//	jobkit_sched_retries_total                      counter: failed runs scheduled to retry
//	jobkit_recovery_rescues_total                   counter: runs rescued after their lease lapsed
//	jobkit_recovery_poisoned_total                  counter: entries poisoned by too many rescues
//	jobkit_recovery_alerts_total                    counter: alerts raised
//
// The sched names are those of client-go's workqueue metrics, so that
// dashboards and alerts written for them carry over with a change of
// prefix and label (client-go labels by name, this package by queue).
// queue_duration_seconds counts, as client-go's does, only the time an
// entry waited ready to run: a delay, a retry backoff or a snooze is not
// waiting, nor is a run cut short to run again (a rerun, a rescue). One
// difference: adds_total counts the entries added, and a
// retry is not an add (client-go's AddRateLimited re-adds the item, and
// counts it); retries_total counts those.
//
// The scheduler sets the three gauges twice a second while it runs; the
// counters and histograms move as things happen. A series appears once
// sched.NewQueue asks for its queue's metrics, before it opens the queue's
// Backend (a NewQueue whose Backend's Open then fails leaves the queue's
// series at zero; one made again with the name uses them), or, for the
// recovery counters, once the reaper first counts something for the queue.
//
// Several schedulers may share one Provider only if their queue names
// differ: a queue name is a series, and the gauges of two queues of the same
// name would overwrite each other. To export several schedulers to one
// registry, give each its own Provider with a distinguishing const label
// (Options.ConstLabels).
package prometheus
