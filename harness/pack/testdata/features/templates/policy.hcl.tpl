namespace "[[ var "message" . ]]" {
  policy = "read"
}
