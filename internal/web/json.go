package web

// MaxBody is the largest request body a route accepts unless it declares
// its own bound (BodyLimit); larger answers 413.
const MaxBody = 1 << 20
