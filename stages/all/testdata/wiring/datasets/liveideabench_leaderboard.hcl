dataset "liveideabench_leaderboard" {
  format = "liveideabench-leaderboard"
  path   = "${var.data}/board.csv"
}
