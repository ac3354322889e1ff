job "undefined_func" {

  name = "[[ shout "hello" ]]"
}
