variable "n" {}

variable "k" {
  type = number
}

dataset "targets" {
  format = "ideabench"
  path   = "../targets.jsonl"
}

stage "echo" "a" {
  input = dataset.targets
  n     = var.n
  tags  = [tostring(var.k)]
}
