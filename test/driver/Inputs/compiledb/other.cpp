int h() { return 0; }
