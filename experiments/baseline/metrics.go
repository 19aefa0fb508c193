package baseline

import "math"

// Entropy returns the Shannon entropy -sum p log p of a probability vector in
// nats. Zero entries contribute zero.
func Entropy(p []float64) float64 {
	h := 0.0
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log(v)
		}
	}
	return h
}

// MeanProba returns the element-wise mean of sampled probability vectors
// (K x nClasses), the Monte Carlo predictive mean p̄(Y|x). It returns nil for
// no samples.
func MeanProba(samples [][]float64) []float64 {
	if len(samples) == 0 {
		return nil
	}
	m := make([]float64, len(samples[0]))
	for _, s := range samples {
		for j, v := range s {
			m[j] += v
		}
	}
	inv := 1 / float64(len(samples))
	for j := range m {
		m[j] *= inv
	}
	return m
}

// PredictiveEntropy returns H[p̄(Y|x)], the entropy of the mean of the
// sampled probability vectors: the total predictive uncertainty.
func PredictiveEntropy(samples [][]float64) float64 {
	return Entropy(MeanProba(samples))
}

// MutualInformation returns the mutual information between the prediction and
// the model, H[p̄] - mean_k H[p_k], estimated from sampled probability vectors:
// the epistemic part of the predictive uncertainty. It is zero when all
// samples agree and is clamped at zero against rounding.
func MutualInformation(samples [][]float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	expected := 0.0
	for _, s := range samples {
		expected += Entropy(s)
	}
	mi := PredictiveEntropy(samples) - expected/float64(len(samples))
	if mi < 0 {
		return 0
	}
	return mi
}

// SampleStd returns, per class, the population standard deviation of the
// sampled probabilities p_k(Y=j|x) over the K samples.
func SampleStd(samples [][]float64) []float64 {
	m := MeanProba(samples)
	if m == nil {
		return nil
	}
	sd := make([]float64, len(m))
	for _, s := range samples {
		for j, v := range s {
			d := v - m[j]
			sd[j] += d * d
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(sd[j] / float64(len(samples)))
	}
	return sd
}

// ECE returns the top-label expected calibration error of predicted
// probability vectors probas against labels y with nBins equal-width
// confidence bins on [0, 1]: sum_b |B_b|/n * |acc(B_b) - conf(B_b)|, where the
// confidence of a prediction is its largest probability and a confidence of
// exactly 1 falls in the last bin. It returns NaN for empty input or
// nBins < 1.
func ECE(probas [][]float64, y []int, nBins int) float64 {
	if len(probas) == 0 || nBins < 1 {
		return math.NaN()
	}
	count := make([]float64, nBins)
	conf := make([]float64, nBins)
	acc := make([]float64, nBins)
	for i, p := range probas {
		k := Argmax(p)
		c := p[k]
		b := int(c * float64(nBins))
		if b >= nBins {
			b = nBins - 1
		}
		if b < 0 {
			b = 0
		}
		count[b]++
		conf[b] += c
		if k == y[i] {
			acc[b]++
		}
	}
	e := 0.0
	for b := range count {
		if count[b] > 0 {
			e += math.Abs(acc[b]-conf[b]) / float64(len(probas))
		}
	}
	return e
}
