// A stand-in gpuscope-view linked against a library the loader cannot find,
// the way the viewer is on a machine without Qt.
extern "C" int fake_qt_widgets();

int main() { return fake_qt_widgets(); }
