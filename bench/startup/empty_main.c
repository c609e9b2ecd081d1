/* A program-mode program (built like agoracc builds one) that does nothing. */
int main(void) { return 0; }
