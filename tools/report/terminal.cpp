#include "terminal.h"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>

namespace psw_report {

namespace {

volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_resized = 0;

void on_stop(int) { g_stop = 1; }
void on_winch(int) { g_resized = 1; }

void install(int sig, void (*fn)(int)) {
    struct sigaction sa {};
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: poll() must return on a signal
    sigaction(sig, &sa, nullptr);
}

void write_all(const std::string &s) {
    size_t off = 0;
    while (off < s.size()) {
        ssize_t w = ::write(STDOUT_FILENO, s.data() + off, s.size() - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        off += static_cast<size_t>(w);
    }
}

// Restores the terminal however the view ends.
class RawTerminal {
public:
    RawTerminal() {
        have_ = tcgetattr(STDIN_FILENO, &saved_) == 0;
        if (have_) {
            termios raw = saved_;
            raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
            // ISIG stays on: Ctrl-C arrives as SIGINT and ends the loop.
            raw.c_cc[VMIN] = 0;
            raw.c_cc[VTIME] = 0;
            tcsetattr(STDIN_FILENO, TCSANOW, &raw);
        }
        write_all("\x1b[?1049h\x1b[?25l");  // alternate screen, hide cursor
    }
    ~RawTerminal() {
        write_all("\x1b[?25h\x1b[?1049l");
        if (have_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
    }

private:
    termios saved_{};
    bool have_ = false;
};

void terminal_size(int *w, int *h) {
    winsize ws{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
        *w = ws.ws_col;
        *h = ws.ws_row;
    } else {
        *w = 120;
        *h = 40;
    }
}

}  // namespace

int run_fullscreen(double interval_s, const std::function<std::vector<std::string>(int, int)> &frame) {
    install(SIGINT, on_stop);
    install(SIGTERM, on_stop);
    install(SIGHUP, on_stop);
    install(SIGWINCH, on_winch);
    std::exception_ptr failure;
    {
        RawTerminal term;
        while (!g_stop) {
            int w, h;
            terminal_size(&w, &h);
            try {
                std::vector<std::string> lines = frame(w, h);
                std::string out = "\x1b[H";
                for (size_t i = 0; i < lines.size(); i++) out += lines[i] + "\x1b[K" + (i + 1 < lines.size() ? "\r\n" : "");
                out += "\x1b[J";
                write_all(out);
            } catch (...) {
                failure = std::current_exception();
                break;
            }
            auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(interval_s);
            bool quit = false;
            while (!g_stop && !quit) {
                auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
                if (left.count() <= 0) break;
                pollfd p{STDIN_FILENO, POLLIN, 0};
                int rc = ::poll(&p, 1, static_cast<int>(left.count()));
                if (rc < 0 && errno == EINTR) {
                    if (g_resized) {
                        g_resized = 0;
                        break;  // redraw at the new size now
                    }
                    continue;
                }
                if (rc > 0) {
                    char buf[64];
                    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
                    if (n == 0) quit = true;  // stdin closed
                    for (ssize_t i = 0; i < n; i++)
                        if (buf[i] == 'q' || buf[i] == 'Q') quit = true;
                    if (!quit) break;  // any other key: refresh now
                }
            }
            if (quit) break;
        }
    }
    if (failure) std::rethrow_exception(failure);
    return 0;
}

int run_plain(double interval_s, int iterations, const std::function<std::vector<std::string>()> &frame) {
    install(SIGINT, on_stop);
    install(SIGTERM, on_stop);
    for (int i = 0; !g_stop && (iterations == 0 || i < iterations); i++) {
        if (i > 0) {
            struct timespec ts;
            ts.tv_sec = static_cast<time_t>(interval_s);
            ts.tv_nsec = static_cast<long>((interval_s - static_cast<double>(ts.tv_sec)) * 1e9);
            if (nanosleep(&ts, nullptr) != 0 && g_stop) break;
        }
        std::string out = i > 0 ? "\n" : "";
        for (const auto &l : frame()) out += l + "\n";
        write_all(out);
    }
    return 0;
}

}  // namespace psw_report
