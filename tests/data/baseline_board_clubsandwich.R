# CR2 standard errors and Satterthwaite degrees of freedom of a Bradley-Terry fit of
# tests/data/baseline_board.csv (no ties) by R's clubSandwich: the logistic GLM on the
# design x = e_a - e_b (m0 the reference), clustered by task_id; every model against m0
# (coef_test) and every pair (linear_contrast). Run from the repository root:
#   Rscript tests/data/baseline_board_clubsandwich.R > tests/data/baseline_board_clubsandwich.csv
suppressMessages(library(clubSandwich))
log <- read.csv("tests/data/baseline_board.csv", stringsAsFactors = FALSE)
models <- sort(unique(c(log$model_a, log$model_b)))
x <- matrix(0, nrow(log), length(models), dimnames = list(NULL, models))
x[cbind(seq_len(nrow(log)), match(log$model_a, models))] <- 1
x[cbind(seq_len(nrow(log)), match(log$model_b, models))] <- -1
y <- as.numeric(log$winner == "A")
d <- data.frame(y = y, x[, -1])
# a tight tolerance: glm keeps the working weights of its last-but-one iterate
fit <- glm(y ~ 0 + ., family = binomial, data = d, control = glm.control(epsilon = 1e-14, maxit = 100))
tests <- coef_test(fit, vcov = "CR2", cluster = log$task_id, test = "Satterthwaite")
free <- models[-1]
out <- data.frame(a = free, b = models[1], estimate = coef(fit), se = tests$SE,
                  df = tests$df_Satt)
pairs <- combn(free, 2)
for (k in seq_len(ncol(pairs))) {
  cm <- matrix(0, 1, length(free))
  cm[1, match(pairs[1, k], free)] <- 1
  cm[1, match(pairs[2, k], free)] <- -1
  lc <- linear_contrast(fit, vcov = "CR2", cluster = log$task_id, contrasts = cm,
                        test = "Satterthwaite")
  out <- rbind(out, data.frame(a = pairs[1, k], b = pairs[2, k], estimate = lc$Est,
                               se = lc$SE, df = lc$df))
}
write.csv(out, row.names = FALSE)
