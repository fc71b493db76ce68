package pages

import "github.com/gatehouse/gatehouse/internal/i18n"

// DeviceName is device in English, for the tests.
func DeviceName(ua string) string { return device(i18n.English, ua) }

// DeviceNameIn is device in lang, for the tests.
var DeviceNameIn = device
