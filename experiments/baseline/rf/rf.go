package rf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/ptmhw/ptm/experiments/baseline"
)

// Defaults used for zero Opts fields.
const (
	DefaultNTrees   = 100
	DefaultMinLeaf  = 1
	DefaultMinSplit = 2
)

// AllFeatures, as Opts.MaxFeatures, evaluates every feature at every split
// (bagged trees without feature subsampling).
const AllFeatures = -1

// Opts configures a Model. The zero value selects every default.
type Opts struct {
	// NTrees is the number of trees (default 100).
	NTrees int
	// MaxFeatures is the number of non-constant features evaluated per split
	// (default max(1, floor(sqrt(d))), the usual choice for classification;
	// values above d mean d). AllFeatures evaluates all of them.
	MaxFeatures int
	// MaxDepth limits the depth of the trees (root at depth 0); zero or
	// negative means unlimited (default), so trees grow until leaves are pure
	// or too small.
	MaxDepth int
	// MinLeaf is the minimum number of training rows in a leaf (default 1).
	MinLeaf int
	// MinSplit is the minimum number of rows a node needs to be split
	// (default 2).
	MinSplit int
	// NoBootstrap grows every tree on the full training set instead of a
	// bootstrap sample (the trees then differ only through the feature
	// subsets).
	NoBootstrap bool
	// Workers is the number of goroutines growing trees (default
	// GOMAXPROCS). It does not affect the result.
	Workers int
	// Seed seeds every tree's bootstrap sample and feature choices.
	Seed uint64
}

func (o Opts) withDefaults() Opts {
	if o.NTrees <= 0 {
		o.NTrees = DefaultNTrees
	}
	if o.MinLeaf <= 0 {
		o.MinLeaf = DefaultMinLeaf
	}
	if o.MinSplit <= 0 {
		o.MinSplit = DefaultMinSplit
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

// node is a tree node: an internal node sends x to left if
// x[feature] <= threshold, else to right; a leaf (feature < 0) holds the
// class distribution at offset value of its tree's leaf table.
type node struct {
	feature     int32
	left, right int32
	threshold   float64
	value       int32
}

// tree is one CART tree: nodes[0] is the root, leaves index into probs
// (nClasses values per leaf).
type tree struct {
	nodes []node
	probs []float64
}

// Model is a random forest classifier. Create it with New and train it with
// Fit. Once fitted, Proba and Samples are deterministic and safe for
// concurrent use.
type Model struct {
	opts     Opts
	nClasses int
	nFeat    int
	trees    []tree
}

var _ baseline.Classifier = (*Model)(nil)

// New returns an unfitted forest with the given options.
func New(opts Opts) *Model {
	return &Model{opts: opts.withDefaults()}
}

// NTrees returns the number of trees of the fitted forest.
func (m *Model) NTrees() int { return len(m.trees) }

// Depth returns the depth of the deepest tree (0 for a single leaf).
func (m *Model) Depth() int {
	d := 0
	for _, t := range m.trees {
		d = max(d, t.depth(0))
	}
	return d
}

func (t *tree) depth(i int32) int {
	n := t.nodes[i]
	if n.feature < 0 {
		return 0
	}
	return 1 + max(t.depth(n.left), t.depth(n.right))
}

// Fit grows the forest on X, y.
func (m *Model) Fit(X [][]float64, y []int, nClasses int) error {
	d, err := baseline.ValidateFit(X, y, nClasses)
	if err != nil {
		return fmt.Errorf("rf: fit: %w", err)
	}
	m.nClasses, m.nFeat = nClasses, d
	mtry := m.opts.MaxFeatures
	switch {
	case mtry == 0:
		mtry = max(1, int(math.Floor(math.Sqrt(float64(d)))))
	case mtry < 0 || mtry > d:
		mtry = d
	}
	g := grower{X: X, y: y, nClasses: nClasses, mtry: mtry, opts: m.opts}
	m.trees = make([]tree, m.opts.NTrees)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(m.opts.Workers, m.opts.NTrees) {
		wg.Go(func() {
			for t := range jobs {
				m.trees[t] = g.grow(rand.New(rand.NewPCG(m.opts.Seed, uint64(t))))
			}
		})
	}
	for t := range m.trees {
		jobs <- t
	}
	close(jobs)
	wg.Wait()
	return nil
}

// grower holds the read-only training data shared by all trees.
type grower struct {
	X        [][]float64
	y        []int
	nClasses int
	mtry     int
	opts     Opts
}

// growState is the per-tree scratch space.
type growState struct {
	t      tree
	rng    *rand.Rand
	feats  []int
	keys   []float64
	counts []float64
	left   []float64
}

// grow builds one tree on a bootstrap sample drawn with rng.
func (g *grower) grow(rng *rand.Rand) tree {
	n := len(g.X)
	idx := make([]int, n)
	for i := range idx {
		if g.opts.NoBootstrap {
			idx[i] = i
		} else {
			idx[i] = rng.IntN(n)
		}
	}
	s := &growState{
		rng:    rng,
		feats:  make([]int, len(g.X[0])),
		keys:   make([]float64, n),
		counts: make([]float64, g.nClasses),
		left:   make([]float64, g.nClasses),
	}
	for j := range s.feats {
		s.feats[j] = j
	}
	g.build(s, idx, 0)
	return s.t
}

// build grows the subtree for the rows idx (which it may reorder) and returns
// its node index.
func (g *grower) build(s *growState, idx []int, depth int) int32 {
	id := int32(len(s.t.nodes))
	s.t.nodes = append(s.t.nodes, node{feature: -1})
	clear(s.counts)
	for _, i := range idx {
		s.counts[g.y[i]]++
	}
	pure := slices.Max(s.counts) == float64(len(idx))
	if pure || len(idx) < g.opts.MinSplit || len(idx) < 2*g.opts.MinLeaf ||
		(g.opts.MaxDepth > 0 && depth >= g.opts.MaxDepth) {
		g.leaf(s, id, len(idx))
		return id
	}
	feat, thr, ok := g.bestSplit(s, idx)
	if !ok {
		g.leaf(s, id, len(idx))
		return id
	}
	// Partition idx in place: rows with x <= thr first.
	k := 0
	for j, i := range idx {
		if g.X[i][feat] <= thr {
			idx[k], idx[j] = idx[j], idx[k]
			k++
		}
	}
	l := g.build(s, idx[:k], depth+1)
	r := g.build(s, idx[k:], depth+1)
	s.t.nodes[id] = node{feature: int32(feat), threshold: thr, left: l, right: r}
	return id
}

// leaf turns node id into a leaf holding s.counts / n.
func (g *grower) leaf(s *growState, id int32, n int) {
	s.t.nodes[id].value = int32(len(s.t.probs))
	for _, c := range s.counts {
		s.t.probs = append(s.t.probs, c/float64(n))
	}
}

// bestSplit returns the Gini-optimal split of idx over random features
// (s.counts must hold the class counts of idx). It sorts idx.
func (g *grower) bestSplit(s *growState, idx []int) (feat int, thr float64, ok bool) {
	n := len(idx)
	minLeaf := g.opts.MinLeaf
	bestScore := math.Inf(-1) // maximize Σ l_c²/n_l + Σ r_c²/n_r
	feats := s.feats
	visited := 0
	for k := 0; k < len(feats) && visited < g.mtry; k++ {
		// Draw the next feature without replacement (partial Fisher-Yates).
		j := k + s.rng.IntN(len(feats)-k)
		feats[k], feats[j] = feats[j], feats[k]
		f := feats[k]
		slices.SortFunc(idx, func(a, b int) int {
			va, vb := g.X[a][f], g.X[b][f]
			switch {
			case va < vb:
				return -1
			case va > vb:
				return 1
			}
			return a - b
		})
		keys := s.keys[:n]
		for p, i := range idx {
			keys[p] = g.X[i][f]
		}
		if keys[0] == keys[n-1] {
			continue // constant in this node: does not count
		}
		visited++
		clear(s.left)
		sumL, sumR := 0.0, 0.0 // Σ l_c², Σ r_c²
		for _, c := range s.counts {
			sumR += c * c
		}
		for p := 0; p < n-1; p++ {
			c := g.y[idx[p]]
			lc, rc := s.left[c], s.counts[c]-s.left[c]
			sumL += 2*lc + 1
			sumR -= 2*rc - 1
			s.left[c]++
			nl := p + 1
			if keys[p] == keys[p+1] || nl < minLeaf || n-nl < minLeaf {
				continue
			}
			if score := sumL/float64(nl) + sumR/float64(n-nl); score > bestScore+1e-12 {
				bestScore, feat, ok = score, f, true
				thr = keys[p] + (keys[p+1]-keys[p])/2
				if thr >= keys[p+1] { // midpoint rounded up to the right value
					thr = keys[p]
				}
			}
		}
	}
	return feat, thr, ok
}

// leafProbs returns the leaf distribution of tree t for x.
func (m *Model) leafProbs(t *tree, x []float64) []float64 {
	i := int32(0)
	for {
		n := &t.nodes[i]
		if n.feature < 0 {
			return t.probs[n.value : int(n.value)+m.nClasses]
		}
		if x[n.feature] <= n.threshold {
			i = n.left
		} else {
			i = n.right
		}
	}
}

func (m *Model) check(x []float64) {
	if m.trees == nil {
		panic("rf: model used before Fit")
	}
	if len(x) != m.nFeat {
		panic(fmt.Sprintf("rf: input has %d features, model was fitted on %d", len(x), m.nFeat))
	}
}

// Proba returns the mean of all trees' leaf class distributions for x.
func (m *Model) Proba(x []float64) []float64 {
	m.check(x)
	out := make([]float64, m.nClasses)
	for t := range m.trees {
		for c, v := range m.leafProbs(&m.trees[t], x) {
			out[c] += v
		}
	}
	for c := range out {
		out[c] /= float64(len(m.trees))
	}
	return out
}

// Samples returns K leaf class distributions for x, the k-th from tree
// k mod NTrees: the first K trees when K <= NTrees, all trees cycled in order
// when K is larger (so K = NTrees gives every tree once and the samples'
// mean equals Proba). The rows are fresh copies. K <= 0 gives an empty
// result.
func (m *Model) Samples(x []float64, K int) [][]float64 {
	m.check(x)
	out := make([][]float64, max(K, 0))
	for k := range out {
		out[k] = slices.Clone(m.leafProbs(&m.trees[k%len(m.trees)], x))
	}
	return out
}
