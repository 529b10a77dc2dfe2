package v1alpha1

// ResolutionOrDefault is resolution, Acknowledged when unset (the CRD
// marker's default).
func (s *BenchmarkAckSpec) ResolutionOrDefault() AckResolution {
	if s.Resolution == "" {
		return AckAcknowledged
	}
	return s.Resolution
}
