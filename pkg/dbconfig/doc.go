// Package dbconfig reads a config variant — the text a user gives a database
// server: a MySQL/MariaDB option file or a PostgreSQL postgresql.conf — and
// tells whether the settings it asks for are the ones a running server has.
//
// It is a library with no Kubernetes or driver dependencies: Parse turns the
// text into settings, includes and structural mistakes (with line numbers,
// for messages); Requested picks what a server of a given version actually
// reads; Verify compares that with the effective values a caller queried
// from the server (SHOW GLOBAL VARIABLES, pg_settings), after normalising
// units, sizes, booleans and enum case the way each engine does.
//
// What cannot be verified (an option the server reports no variable for, an
// included file, a section another version reads) is reported as unverified
// with a reason rather than guessed at.
package dbconfig

// Engine is the database engine a variant is written for. The values are
// those of plan.Engine, kept separate so that this package stands alone.
type Engine string

const (
	MySQL    Engine = "mysql"
	MariaDB  Engine = "mariadb"
	Postgres Engine = "postgres"
)

// mysqlFamily reports whether the engine reads MySQL option files.
func (e Engine) mysqlFamily() bool { return e == MySQL || e == MariaDB }
