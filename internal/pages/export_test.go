package pages

// DeviceName is device, for the tests.
var DeviceName = device
