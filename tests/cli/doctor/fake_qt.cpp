extern "C" int fake_qt_widgets() { return 0; }
