package v1alpha1

// The profile's defaults (its CRD markers say the same).
const (
	DefaultProfileSeconds     = 30
	DefaultProfileFrequencyHz = 99
)

// SampledSeconds is seconds sampled per profiled run (default 30).
func (p *ProfileSpec) SampledSeconds() int32 { return positiveOr(p.Seconds, DefaultProfileSeconds) }

// SamplingHz is frequencyHz (default 99).
func (p *ProfileSpec) SamplingHz() int32 { return positiveOr(p.FrequencyHz, DefaultProfileFrequencyHz) }
