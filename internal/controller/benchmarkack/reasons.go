package benchmarkack

// Reasons of the events about a BenchmarkAck (with the Published
// condition's reasons).
const (
	EventAckPublished   = "AckPublished"
	EventAckUnpublished = "AckUnpublished"
)
