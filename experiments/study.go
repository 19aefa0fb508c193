package experiments

import (
	"fmt"
	"strings"

	"github.com/ptmhw/ptm/golden/pipeline"
)

// studySpec returns the full run's configuration and its spec of the data
// set named data (its key, its pipeline name, or the key with '-' for
// '_'), for the study called what.
func studySpec(what, data string) (config, *dsSpec, error) {
	full := newConfig(false, false)
	for i, s := range full.datasets {
		if s.key == data || s.data == data || strings.ReplaceAll(s.key, "_", "-") == data {
			return full, &full.datasets[i], nil
		}
	}
	return full, nil, fmt.Errorf("experiments: %s study: unknown data set %q (want iris, wine or breast-cancer)", what, data)
}

// task is one unit of a study: split `split` of the in-distribution
// protocol (class -1) or of the protocol with class `class` held out.
type task struct{ class, split int }

// studyTasks lists a study's tasks: the in-distribution splits first..
// first+splits-1, then, when oodSplits > 0, splits 0..oodSplits-1 with
// each class of d held out in turn. subs[c] is d without class c and
// helds[c] its held-out rows.
func studyTasks(d *pipeline.Data, first, splits, oodSplits int) (tasks []task, subs []*pipeline.Data, helds [][][]float64, err error) {
	for s := range splits {
		tasks = append(tasks, task{-1, first + s})
	}
	if oodSplits > 0 {
		for c := range d.Classes {
			sub, held, err := WithoutClass(d.Dataset, c)
			if err != nil {
				return nil, nil, nil, err
			}
			subs, helds = append(subs, &pipeline.Data{Dataset: sub}), append(helds, held)
			for s := range oodSplits {
				tasks = append(tasks, task{c, s})
			}
		}
	}
	return tasks, subs, helds, nil
}
