mod x;
