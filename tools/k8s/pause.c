/* The pod sandbox ("pause") program of the local cluster: the first process of every pod, holding
 * its namespaces. Built statically by tools/k8s/build.sh into an image with nothing else in it,
 * because no registry can be pulled from. Sleeps in pause(), reaps children it inherits as PID 1
 * (shared PID namespaces), and exits at once on SIGINT/SIGTERM so pod deletion is not held for the
 * grace period. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int signo) {
  (void)signo;
  _exit(0);
}

static void reap(int signo) {
  (void)signo;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

static void on(int signo, void (*handler)(int)) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(signo, &action, NULL) < 0) _exit(1);
}

int main(void) {
  on(SIGINT, stop);
  on(SIGTERM, stop);
  on(SIGCHLD, reap);
  for (;;) pause();
  return 0;
}
