job "paths" {
  meta {
    mode      = "[[ var "network.mode" . ]]"
    first     = "[[ var "network.ports.0.name" . ]]:[[ var "network.ports.0.port" . ]]"
    team      = "[[ var "labels.team" . ]]"
    prefixed  = "[[ var "paths.network.mode" . ]]"
    chosen    = "[[ var (var "where" .) . ]]"
[[- range $k, $v := var "labels" . ]]
    label_[[ $k ]] = "[[ $v ]]"
[[- end ]]
  }
}
