-- Device ops: a device -> nothing.

op {
  name = "sync",
  id = 97,
  family = "device",
  doc = "Waits until every operation queued on the device has finished.",
  args = { "device device" },
  returns = "none",
}
