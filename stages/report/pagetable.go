package report

import "github.com/ideaflow/ideaflow/stages"

// PageTable is one table as report.html shows it: a table a stage's
// presenter laid out from its node's cached output (stages.Presenter; a
// report's from the table its output carries, see present.go), its cells
// formatted as the stage formats them. The page never parses a file back.
type PageTable = stages.Table

// PageCell is one table cell (stages.Cell).
type PageCell = stages.Cell
