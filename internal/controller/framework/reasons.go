package framework

// Reasons of the events more than one kind records. Each kind declares its
// own events' reasons (reasons.go in its package); the reasons of conditions
// (and of status.cells[].reason) are API and live in the API package, one
// file per kind (api/v1alpha1/*_reasons.go); label, annotation and finalizer
// keys in api/v1alpha1/labels.go. See docs/design.md, "Reasons, keys and
// labels".
const (
	EventResultsUploaded = "ResultsUploaded"
	// EventSitePublishFailed: the suite's site could not be regenerated
	// after the run's upload (the run's results are uploaded; the next
	// run, an ack or kubectl dbbench site --publish regenerates it).
	EventSitePublishFailed = "SitePublishFailed"
)
