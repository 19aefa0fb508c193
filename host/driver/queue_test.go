package driver_test

import (
	"testing"
	"time"

	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/internal/testmodel"
	"github.com/ptmhw/ptm/host/softboard"
)

func TestDeepQueueExperiment(t *testing.T) {
	for _, svc := range []time.Duration{5 * time.Millisecond, 15 * time.Millisecond, 30 * time.Millisecond} {
		for _, paced := range []bool{false, true} {
			bcfg := softboard.Config{QueueFrames: 31}
			var dopts driver.Opts
			if paced {
				bcfg.BitRate = 19200
				dopts.LineRate = 3_000_000
			}
			r := newRigServe(t, testmodel.Multiclass, bcfg, dopts, softboard.StreamOpts{Pace: paced}, nil, nil)
			ctx := ctxT(t, 5*time.Minute)
			loaded(t, r, ctx)
			before := r.d.Stats()
			r.board.SetExecTime(svc)
			r.streamAll(t, ctx, 100, 3, func(int) frame.Mode { return frame.ModeSums })
			st := r.d.Stats()
			t.Logf("service %v paced %v: SRTT %v -> %v, RTO %v; %d timeouts, %d busy, %d late, maxbackoff %d spurious %d", svc, paced, before.SRTT, st.SRTT, st.RTO, st.Timeouts-before.Timeouts, st.Busy, st.Stray, st.MaxBackoff, st.SpuriousTimeouts)
		}
	}
}
