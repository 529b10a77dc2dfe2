package benchmarkschedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// cronParser reads the five standard fields and the @yearly … @hourly
// descriptors. @every is refused (by the schema too): a constant delay is not
// anchored to the clock, so restarts would move the run times.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseSchedule parses spec.schedule in spec.timeZone. The reason tells
// which field is wrong.
func parseSchedule(spec *dbbenchv1alpha1.BenchmarkScheduleSpec) (cron.Schedule, string, error) {
	loc := time.Local
	if spec.TimeZone != nil && *spec.TimeZone != "" {
		l, err := time.LoadLocation(*spec.TimeZone)
		if err != nil {
			return nil, dbbenchv1alpha1.ScheduleReasonInvalidTimeZone, fmt.Errorf("timeZone %q: unknown time zone", *spec.TimeZone)
		}
		loc = l
	}
	if strings.HasPrefix(spec.Schedule, "@every") {
		return nil, dbbenchv1alpha1.ScheduleReasonInvalidSchedule, fmt.Errorf("schedule %q: @every is not supported; use cron fields", spec.Schedule)
	}
	s, err := cronParser.Parse(spec.Schedule)
	if err != nil {
		return nil, dbbenchv1alpha1.ScheduleReasonInvalidSchedule, fmt.Errorf("schedule %q: %w", spec.Schedule, err)
	}
	if spec, ok := s.(*cron.SpecSchedule); ok {
		spec.Location = loc
	}
	return s, "", nil
}

// maxCountedMisses bounds the forward walk over missed times; beyond it the
// count is reported as "more than".
const maxCountedMisses = 100

// mostRecentTime returns the latest schedule time in (earliest, now], and
// how many schedule times fall in that interval (capped at
// maxCountedMisses+1). ok is false when there is none.
func mostRecentTime(s cron.Schedule, earliest, now time.Time) (last time.Time, missed int, ok bool) {
	t := s.Next(earliest)
	for !t.IsZero() && !t.After(now) {
		last, ok = t, true
		missed++
		if missed > maxCountedMisses {
			// A long outage: find the last time without walking every
			// minute of it, searching back from now in growing windows.
			return lastBefore(s, t, now), missed, true
		}
		t = s.Next(t)
	}
	return last, missed, ok
}

// lastBefore returns the latest schedule time in [floor, now], knowing that
// floor is one.
func lastBefore(s cron.Schedule, floor, now time.Time) time.Time {
	for window := time.Hour; ; window *= 2 {
		from := now.Add(-window)
		if !from.After(floor) {
			from = floor.Add(-time.Second)
		}
		if t := s.Next(from); !t.IsZero() && !t.After(now) {
			last := t
			for n := s.Next(t); !n.IsZero() && !n.After(now); n = s.Next(n) {
				last = n
			}
			return last
		}
		if !from.After(floor) {
			return floor
		}
	}
}

// runName is the deterministic name of the run for a schedule time: a
// restarted controller finds the run it already created instead of making
// a second one.
func runName(schedule string, scheduled time.Time) string {
	return fmt.Sprintf("%s-%d", schedule, scheduled.Unix()/60)
}
