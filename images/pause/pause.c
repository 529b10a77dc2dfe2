/* pause: the pod sandbox's init. Sleeps until told to stop, reaping orphans. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, NULL, WNOHANG) > 0) {} }

int main(void) {
	struct sigaction term = {.sa_handler = stop}, chld = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
	sigaction(SIGINT, &term, NULL);
	sigaction(SIGTERM, &term, NULL);
	sigaction(SIGCHLD, &chld, NULL);
	for (;;) pause();
}
