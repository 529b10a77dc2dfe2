// Package verdictformat writes a run's regression verdict (triage.Verdict)
// in the forms build systems read: JUnit XML, one test case per judged
// (cell, step, threads, metric), which CI servers (Jenkins, GitLab, GitHub
// Actions' test reporters) show as tests, and markdown, what a pull
// request's comment or a job summary holds. The JSON form is the document
// itself (triage.MarshalVerdict). Pure: it reads and writes no files.
package verdictformat
